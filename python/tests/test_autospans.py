"""Automatic spans on real libraries (tiny offline models) and the copy
classification that CUDA runs depend on."""
import threading

import pytest
from conftest import by_name, of_type

from inferscope import _autospans, _scope, scope

torch = pytest.importorskip("torch")


def _autos(lines):
    return [x for x in of_type(lines, "span") if x["kind"] not in ("scope", "process")]


@pytest.fixture(scope="module")
def tokenizer():
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = ["the quick brown fox jumps over the lazy dog %d" % i for i in range(50)]
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<eos>"]))
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", unk_token="<unk>", pad_token="<eos>")


def test_tokenizer_spans(recording, tokenizer):
    tokenizer(["outside any scope"])  # must not be recorded
    with scope("req"):
        enc = tokenizer(["the quick fox", "lazy dog"], padding=True)
        tokenizer.encode("the dog")
        tokenizer.decode(enc["input_ids"][0])
        tokenizer.batch_decode(enc["input_ids"])
    lines = recording()
    req = by_name(lines, "req")[0]
    got = [(x["name"], x["kind"], x["parent"]) for x in _autos(lines)]
    want = [(n, "tokenize", req["id"]) for n in
            ("tokenizer.__call__", "tokenizer.encode", "tokenizer.decode", "tokenizer.batch_decode")]
    assert got == want, "expected one tokenize span per call, none nested or outside the scope;\nwant %s\ngot  %s" % (
        want, got)


def test_forward_is_outermost_module_only(recording):
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Sequential(torch.nn.Linear(8, 2)))
    x = torch.randn(3, 8)
    model(x)  # outside: nothing
    with scope("infer"):
        with torch.no_grad():
            model(x)
            model(x)
        x.to(torch.float64)  # dtype only: not a copy
        x.to("cpu")  # already there: not a copy
        x.cpu()
    lines = recording()
    infer = by_name(lines, "infer")[0]
    got = [(x["name"], x["kind"], x["parent"]) for x in _autos(lines)]
    assert got == [("Sequential.forward", "forward", infer["id"])] * 2, (
        "expected two forward spans (outermost module only, no copies), got %s" % got)


def test_generate_contains_forward_steps(recording, tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=300, n_positions=32, n_embd=16, n_layer=1, n_head=2)).eval()
    with scope("llm"):
        ids = tokenizer(["the quick fox"], return_tensors="pt")
        out = model.generate(**ids, max_new_tokens=3, do_sample=False, pad_token_id=0)
        tokenizer.decode(out[0])
    lines = recording()
    gen = by_name(lines, "GPT2LMHeadModel.generate")
    assert len(gen) == 1 and gen[0]["kind"] == "generate", "expected one generate span, got %s" % gen
    steps = [x for x in _autos(lines) if x["kind"] == "forward"]
    assert len(steps) == 3 and {x["parent"] for x in steps} == {gen[0]["id"]}, (
        "expected 3 forward steps inside generate, got %s" % steps)
    assert all(x["name"] == "GPT2LMHeadModel.forward" for x in steps), "unexpected names %s" % steps


def test_torchvision_transforms(recording):
    T = pytest.importorskip("torchvision.transforms")
    pipeline = T.Compose([T.Lambda(lambda t: t * 2), T.Normalize([0.5], [0.5])])
    img = torch.rand(1, 4, 4)
    with scope("prep"):
        pipeline(img)
        T.Normalize([0.5], [0.5])(img)  # an nn.Module transform on its own
    lines = recording()
    got = [(x["name"], x["kind"]) for x in _autos(lines)]
    assert got == [("Compose.__call__", "transform"), ("Normalize.__call__", "transform")], (
        "expected two transform spans and no forward for Normalize, got %s" % got)


def test_eight_threads_running_models(recording):
    models = [torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU()) for _ in range(8)]
    x = torch.randn(4, 16)

    def work(i):
        with scope("worker-%d" % i):
            for _ in range(5):
                models[i](x)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    lines = recording()
    spans = {x["id"]: x for x in of_type(lines, "span")}
    for x in spans.values():
        if x["kind"] == "forward":
            p = spans[x["parent"]]
            assert p["kind"] == "scope" and p["tid"] == x["tid"], "forward %s has parent %s" % (x, p)
    per_thread = {}
    for x in spans.values():
        per_thread.setdefault(x["tid"], []).append(x["kind"])
    assert len(per_thread) == 8 and all(sorted(k) == ["forward"] * 5 + ["scope"] for k in per_thread.values()), (
        "expected 8 threads with 1 scope + 5 forwards each, got %s" % per_thread)


def test_copy_classification():
    mk = _autospans.move_kind
    cases = {(True, "cuda"): "h2d", (False, "cpu"): "d2h", (True, "cpu"): None, (False, "cuda"): None,
             (True, "meta"): None, (True, None): None, (True, "xpu"): "h2d"}
    got = {k: mk(*k) for k in cases}
    assert got == cases, "move_kind: expected %s, got %s" % (cases, got)
    target = _autospans._to_target(torch)
    cases = [((torch.device("cuda:1"),), {}, "cuda"), (("cuda:0",), {}, "cuda"), ((), {"device": "cpu"}, "cpu"),
             ((torch.float16,), {}, None), ((0,), {}, "cuda"), ((torch.zeros(1),), {}, "cpu"),
             (("cuda", torch.float16), {"non_blocking": True}, "cuda"), ((), {"dtype": torch.float16}, None)]
    for args, kwargs, want in cases:
        assert target(args, kwargs) == want, "target(%r, %r): expected %r, got %r" % (args, kwargs, want,
                                                                                    target(args, kwargs))


def test_copy_wrapper_records_host_to_device(recording):
    """The .cuda()/.cpu() span path, with stand-in tensors (no GPU here)."""

    class FakeTensor:
        def __init__(self, on_cpu):
            self.is_cpu, self.is_meta = on_cpu, False

    cuda = _autospans._copy("Tensor.cuda", lambda t, a, k: "h2d" if t.is_cpu else None)(lambda self: "moved")
    cpu = _autospans._copy("Tensor.cpu", lambda t, a, k: None if t.is_cpu else "d2h")(lambda self: "moved")
    with scope("copy"):
        cuda(FakeTensor(True))
        cuda(FakeTensor(False))  # already on the device
        cpu(FakeTensor(False))
    lines = recording()
    got = [(x["name"], x["kind"]) for x in _autos(lines)]
    assert got == [("Tensor.cuda", "h2d"), ("Tensor.cpu", "d2h")], "expected one h2d and one d2h span, got %s" % got


@pytest.mark.parametrize("inside", ["forward", "generate", "encode", "tokenize", "transform"])
def test_copies_inside_library_spans_are_not_spans(recording, inside):
    """A library's own .to() calls are not spans (their cost showed on the
    H100); the user's copy next to the library call still is."""

    class FakeTensor:
        is_cpu, is_meta = True, False

    cuda = _autospans._copy("Tensor.cuda", lambda t, a, k: "h2d" if t.is_cpu else None)(lambda self: "moved")
    lib = _autospans._method(inside, "Lib.call")(lambda self: [cuda(FakeTensor()) for _ in range(3)])
    with scope("req"):
        cuda(FakeTensor())
        lib(object())
    lines = recording()
    got = [(x["name"], x["kind"]) for x in _autos(lines)]
    assert got == [("Tensor.cuda", "h2d"), ("Lib.call", inside)], (
        "expected the user's copy and the %s span, no copy inside it; got %s" % (inside, got))


def test_module_fast_path_keeps_compiled_call_impl(recording):
    """The pass-through path stands in for torch's _wrapped_call_impl, so it
    must honour _compiled_call_impl (Module.compile()) as torch does."""
    assert _autospans._is_torch_wrapped_call_impl(torch.nn.Module._wrapped_call_impl), (
        "expected torch %s's Module._wrapped_call_impl to be recognised" % torch.__version__)
    calls = []
    inner = torch.nn.Linear(2, 2)
    inner._compiled_call_impl = lambda *a, **k: calls.append(a) or "compiled"
    outer = torch.nn.Sequential(inner)
    with scope("req"):
        outer(torch.zeros(1, 2))  # outermost: a span; inner goes through the pass-through path
        got_inner = inner(torch.zeros(1, 2))  # outermost itself now: the span path
    assert len(calls) == 2 and got_inner == "compiled", "expected both calls to use _compiled_call_impl, got %s, %r" % (calls, got_inner)
    lines = recording()
    got = [(x["name"], x["kind"]) for x in _autos(lines)]
    assert got == [("Sequential.forward", "forward"), ("Linear.forward", "forward")], "got %s" % got


def test_uninstall_restores_originals(recording):
    with scope("first"):  # installs
        pass
    assert _autospans.installed(), "expected patches after the first scope"
    assert getattr(torch.nn.Module.__call__, "_inferscope_orig", None) is not None, "Module.__call__ not patched"
    assert "to" in torch.Tensor.__dict__, "Tensor.to not patched"
    recording()  # stops, which uninstalls
    assert not _autospans.installed()
    assert getattr(torch.nn.Module.__call__, "_inferscope_orig", None) is None, "Module.__call__ still patched"
    assert "to" not in torch.Tensor.__dict__, "expected Tensor.to back to the inherited C method"
    assert _scope._rec is None


def test_torch_compile_sees_no_wrappers(recording):
    """Recording must not change the workload's graphs: dynamo traces the
    originals (_torchdynamo_inline), not the wrappers' clock reads."""
    import torch._dynamo

    m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8))
    x = torch.randn(2, 8)

    def f(t):
        return m(t.to(torch.float32)).cpu()

    with scope("compiled"):
        torch._dynamo.reset()
        exp = torch._dynamo.explain(f)(x)
    torch._dynamo.reset()
    recording()
    assert (exp.graph_count, exp.graph_break_count) == (1, 0), "expected 1 graph and no breaks, got %d graphs: %s" % (
        exp.graph_count, [str(b.reason)[:200] for b in exp.break_reasons])


def test_auto_spans_off(tmp_path):
    """INFERSCOPE_AUTO_SPANS=0: scopes only, nothing patched."""
    from conftest import read_jsonl, spans_file

    from inferscope import _boot

    _boot.start(str(tmp_path / "raw"), auto_spans=False, handlers=False)
    try:
        with scope("s"):
            torch.nn.Linear(2, 2)(torch.ones(2))
        patched = getattr(torch.nn.Module.__call__, "_inferscope_orig", None) is not None
    finally:
        _boot.stop()
    lines = read_jsonl(spans_file(tmp_path / "raw"))
    assert not patched, "expected Module.__call__ left alone with auto spans off"
    assert [x["kind"] for x in of_type(lines, "span")] == ["scope"], "expected only the scope span, got %s" % (
        of_type(lines, "span"))
