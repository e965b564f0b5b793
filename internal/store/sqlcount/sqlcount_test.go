package sqlcount_test

import (
	"context"
	"testing"

	"gpugraph/internal/store"
	"gpugraph/internal/store/sqlcount"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

func TestStatementsCountsAndRecords(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		s, err := sqlcount.Register(st.DB)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var got []sqlcount.Statement
		n := s.During(func() {
			got = s.Record(func() {
				st.DB.Create(&models.GPUModel{ID: "m", Name: "M", Manufacturer: models.NVIDIA})
				var m []models.GPUModel
				st.DB.Where("id IN ?", []string{"m", "x"}).Find(&m)
				var c int64
				st.DB.Raw("SELECT count(*) FROM gpu_models").Scan(&c)
				st.DB.Exec("UPDATE gpu_models SET memory_gb = ?", 80)
				_, _ = st.NodesByIDs(ctx, []string{"a"}, nil)
			})
		})
		if n != 5 || len(got) != 5 {
			t.Fatalf("%d statements counted, %d recorded: %+v", n, len(got), got)
		}
		if len(got[1].Vars) != 2 || got[1].Vars[0] != "m" || got[3].Vars[0] != 80 {
			t.Fatalf("vars = %+v %+v", got[1], got[3])
		}
		if again := s.Record(func() {}); len(again) != 0 {
			t.Fatalf("recorded %d statements of nothing", len(again))
		}
	})
}
