package filterby

import "fmt"

// Error is a rejected filterBy, sortBy or sortOrder parameter. Its message
// names the parameter and quotes the offending text, so a handler can answer
// 400 with it as is:
//
//	invalid filterBy "size==1": unknown field "size"
type Error struct {
	Param  string // "filterBy", "sortBy" or "sortOrder"
	Text   string // the offending filter or value, as received
	Reason string // what is wrong with it
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Param, e.Text, e.Reason)
}

// Why a filter is rejected; the messages are the contract, see Error.
const (
	reasonMissingField    = "missing field"
	reasonMissingOperator = "missing operator"
	reasonUnknownOperator = "unknown operator"
	reasonEmptyValue      = "empty value"
	reasonInvalidUTF8     = "value is not valid UTF-8"
	reasonNUL             = "value contains a NUL character"
	reasonBadDate         = "bad date; want ISO 8601 with a time zone, e.g. 2023-06-06T12:09:18.211Z"
	reasonBadDatePlus     = reasonBadDate + " (a + in a query string must be sent as %2B)"
	reasonDateNoZone      = "date has no time zone; add Z or an offset such as +02:00"
	reasonDateRange       = "date is out of range (years 0001 to 9999 in UTC)"
)

func filterError(text, reason string) *Error {
	return &Error{Param: "filterBy", Text: text, Reason: reason}
}

func unknownField(text, name string) *Error {
	return filterError(text, fmt.Sprintf("unknown field %q", name))
}

func dateOpError(text string, op Op) *Error {
	return filterError(text, fmt.Sprintf("operator %q does not apply to dates; use ==, !=, <= or >=", string(op)))
}
