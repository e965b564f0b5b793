package models

import "time"

// MetricSample is one stored value of one series of a pod. Labels is the
// series' label set as canonical JSON ({"gpu":"0"}, keys sorted; "{}" for none).
type MetricSample struct {
	PodID  string    `gorm:"primaryKey"`
	Type   string    `gorm:"primaryKey"`
	Labels string    `gorm:"primaryKey"`
	TS     time.Time `gorm:"primaryKey;column:ts"`
	Value  float64
}

// HistogramSample is one stored histogram of a pod: cumulative counts by
// upper bound, as canonical JSON ({"0.001":"45","+Inf":"1024"}).
type HistogramSample struct {
	PodID   string    `gorm:"primaryKey"`
	Type    string    `gorm:"primaryKey"`
	TS      time.Time `gorm:"primaryKey;column:ts"`
	Buckets string
}

func (MetricSample) TableName() string    { return "metric_samples" }
func (HistogramSample) TableName() string { return "histogram_samples" }
