package models

// String names an actor as the event log's readers see it: "user
// key:3f9a…", "agent dgx-h100-01", "sweep".
func (a Actor) String() string {
	if a.ID == "" {
		return string(a.Kind)
	}
	return string(a.Kind) + " " + a.ID
}

// Actor is who made the event's transition.
func (e *VMEvent) Actor() Actor { return Actor{Kind: e.ActorKind, ID: e.ActorID} }
