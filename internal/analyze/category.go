package analyze

// Category is one exclusive cause of wall time. Every nanosecond of an
// analysed iteration is attributed to exactly one category.
type Category string

const (
	CatGPUCompute Category = "gpu_compute"
	CatH2D        Category = "h2d_copy"
	CatD2H        Category = "d2h_copy"
	CatD2D        Category = "d2d_copy"
	CatSync       Category = "sync_wait"
	CatFramework  Category = "framework_overhead"
	CatPreprocess Category = "cpu_preprocessing"
	CatCPUCompute Category = "cpu_compute"
	CatIdle       Category = "idle"
)

// Categories in report order.
var Categories = []Category{CatGPUCompute, CatCPUCompute, CatH2D, CatD2H, CatD2D, CatSync, CatFramework, CatPreprocess, CatIdle}

// Label is the human name of a category.
func (c Category) Label() string {
	switch c {
	case CatGPUCompute:
		return "GPU compute"
	case CatH2D:
		return "H2D copy"
	case CatD2H:
		return "D2H copy"
	case CatD2D:
		return "D2D copy"
	case CatSync:
		return "Sync wait"
	case CatFramework:
		return "Framework overhead"
	case CatPreprocess:
		return "CPU preprocessing"
	case CatCPUCompute:
		return "CPU compute (ops)"
	case CatIdle:
		return "Idle / other"
	}
	return string(c)
}

// IsCopy reports whether c is one of the copy categories.
func (c Category) IsCopy() bool { return c == CatH2D || c == CatD2H || c == CatD2D }

func catIndex(c Category) int {
	for i, x := range Categories {
		if x == c {
			return i
		}
	}
	return len(Categories) - 1
}
