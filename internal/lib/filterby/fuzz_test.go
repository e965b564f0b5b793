package filterby

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/lib/podfield"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"name==a", "name!=a", "name<=a", "name>=a", "name=@a", "name!@a", "name=^a", "name=$a",
		"nodeName!=some-node-name", "currentNodePool==default", "currentNodepool=^d",
		"k8sPhase==Running", "projectId==1", "priorityClassName=@high",
		"clusterId==c,workloadId==w", "revisionId==r,x", "name==a,b,nodeName==c", "name==a,,b",
		`name=@50%_\`, "name==é", "name==' OR 1=1 --", `name=="; DROP TABLE pods; --`,
		"createdAt>=2024-01-01T00:00:00Z", "completedAt<=2024-01-01T12:00:00.123456789+02:00",
		"deletedAt==2024-01-01t00:00z", "createdAt!=2024-01-01T00:00:00,5-0530",
		"createdAt>=2024-01-01T00:00:00", "createdAt>=2024-01-01", "createdAt>=0001-01-01T00:00:00+01:00",
		"createdAt>=9999-12-31T23:59:59.999999999Z", "createdAt>=2024-01-01T00:00:00 02:00",
		"createdAt=@2024", "", ",", "==", "==x", "size==1", "nodeName~=x", "nodeName", "nodeName=",
		"nodeName==", "name==\xff", "name==a\x00", "name==a,size==1", "name==a,createdAt>=bad",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		one, err := ParseOne(s)
		if err != nil {
			checkError(t, err, s)
		} else {
			checkFilter(t, one, s)
		}

		fs, err := Parse([]string{s})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(s, e.Text) {
				t.Fatalf("Parse(%q) error %v does not name a piece of the parameter", s, err)
			}
			checkError(t, err, e.Text)
			return
		}
		raws := make([]string, len(fs))
		for i, f := range fs {
			checkFilter(t, f, f.Raw)
			raws[i] = f.Raw
		}
		// Cutting at commas loses nothing, and cuts only before a filter.
		if strings.Join(raws, ",") != s {
			t.Fatalf("Parse(%q) pieces %q do not join back", s, raws)
		}
		if len(fs) == 1 && !reflect.DeepEqual(fs[0], one) {
			t.Fatalf("Parse(%q) = %+v, ParseOne = %+v", s, fs[0], one)
		}
	})
}

func checkError(t *testing.T, err error, text string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Param != "filterBy" || e.Text != text || e.Reason == "" {
		t.Fatalf("error for %q = %#v", text, err)
	}
	if want := fmt.Sprintf("invalid filterBy %q: %s", text, e.Reason); err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

func checkFilter(t *testing.T, f Filter, raw string) {
	t.Helper()
	fd, ok := filterField(f.Field)
	if !ok || fd.Name() != f.Field || f.Raw != raw || f.Value == "" || f.IsTime != (fd.Kind == podfield.Date) {
		t.Fatalf("ParseOne(%q) = %+v", raw, f)
	}
	if f.IsTime && (f.Time.Location() != time.UTC || f.Time.Year() < 1 || f.Time.Year() > 9999) {
		t.Fatalf("%q parses to instant %v", raw, f.Time)
	}
	back, err := ParseOne(f.String())
	if err != nil {
		t.Fatalf("%q: String() %q does not parse: %v", raw, f.String(), err)
	}
	back.Raw = f.Raw
	if !reflect.DeepEqual(back, f) {
		t.Fatalf("%q: String() %q parses to %+v, want %+v", raw, f.String(), back, f)
	}
}
