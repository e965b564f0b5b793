package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Racing exchanges of one bootstrap token: exactly one wins, the others
// are told it was used, and the node has one credential.
func TestRedeemEnrollmentOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := store.Now()
		if err := st.CreateEnrollment(ctx, store.Enrollment{TokenHash: "tok", NodeName: "dgx-01", ClusterID: "c1",
			CreatedBy: "k", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, errs[i] = st.RedeemEnrollment(ctx, "tok", "secret-"+string(rune('a'+i)), now)
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrEnrollmentUsed):
				t.Errorf("a losing exchange: %v", err)
			}
		}
		var creds int64
		st.DB.Table("node_credentials").Where("node_name = ?", "dgx-01").Count(&creds)
		if won != 1 || creds != 1 {
			t.Errorf("%d exchanges won, %d credentials; want 1 and 1", won, creds)
		}
		if _, err := st.RedeemEnrollment(ctx, "nope", "s", now); !errors.Is(err, store.ErrEnrollmentUnknown) {
			t.Errorf("unknown token: %v", err)
		}
	})
}
