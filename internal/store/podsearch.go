package store

import (
	"reflect"

	"gorm.io/gorm"

	"gpugraph/models"
)

// keepPodSearchText registers, on every gorm create and update, the step
// that keeps a Pod's search key in step with the fields it is made of
// (models.PodSearchText). It lives here, not as a hook method on
// models.Pod, so that models knows nothing of gorm. A write that sets
// columns by name (a map, raw SQL) must still set search_text itself.
func keepPodSearchText(db *gorm.DB) error {
	if err := db.Callback().Create().Before("gorm:create").Register("gpugraph:pod_search_text", fillPodSearchText); err != nil {
		return err
	}
	return db.Callback().Update().Before("gorm:update").Register("gpugraph:pod_search_text", fillPodSearchText)
}

func fillPodSearchText(db *gorm.DB) {
	if db.Statement.Schema == nil || db.Statement.Schema.Table != "pods" {
		return
	}
	rv := db.Statement.ReflectValue
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len(); i++ {
			setPodSearchText(rv.Index(i))
		}
	default:
		setPodSearchText(rv)
	}
}

func setPodSearchText(v reflect.Value) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if !v.CanAddr() {
		return
	}
	var p *models.Pod
	switch x := v.Addr().Interface().(type) {
	case *models.Pod:
		p = x
	case *markedPod: // a cluster batch's row
		p = &x.Pod
	default:
		return
	}
	p.SearchText = models.PodSearchText(p.Name, p.NodeName, p.WorkloadName, p.ProjectName)
}
