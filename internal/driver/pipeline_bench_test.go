package driver
import "testing"
func BenchmarkPipelineLLM(b *testing.B){ for i:=0;i<b.N;i++{ if _,err:=Load("../../testdata/gpu/llm.json.gz", testOptions()); err!=nil{b.Fatal(err)}}}
