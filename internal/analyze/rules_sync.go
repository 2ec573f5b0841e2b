package analyze

import "fmt"

func ruleSyncInLoop(c *ruleCtx) *verdict {
	perIter := (c.f.syncCalls + c.f.itemCalls) / max(c.f.n, 1)
	sc := syncCost(c)
	if perIter < syncBoundCalls || sc < 0.10 {
		return nil
	}
	m := c.r.Metrics
	ev := []string{
		fmt.Sprintf("%d sync calls per iteration (cudaStreamSynchronize & co.), %d of them from .item() (aten::_local_scalar_dense)", m.SyncCalls, m.ItemCalls),
		fmt.Sprintf("waiting in them: %.2f ms per iteration; GPU idle right after each sync until the next launch: %.2f ms; together with the read-back copies %.0f%% of the wall time", m.SyncMs, m.PostSyncIdleMs, 100*sc),
	}
	for _, cp := range m.Copies {
		if cp.Dir == "D2H" && cp.Count >= syncBoundCalls {
			ev = append(ev, fmt.Sprintf("%d D2H copies per iteration averaging %d bytes: scalar read-backs", cp.Count, cp.Bytes/int64(max(cp.Count, 1))))
		}
	}
	return &verdict{
		finding: Finding{ID: "sync-in-loop", Title: "Sync-bound: a host synchronisation inside the loop drains the GPU queue every step",
			Evidence: ev, Impact: sc + 0.05}, // the drained queue also inflates every launch gap after it
		suggestions: []string{suggestNoItem, suggestSyncOnce},
		primary:     c.r.Classification == ClassSyncBound,
	}
}
