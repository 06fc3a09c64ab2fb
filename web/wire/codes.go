package wire

// codes.go: the protocol's error codes, machine-readable, in one place.
// An error message carries one (ErrorPayload.Code) beside a plain-English
// message saying what was wrong and what is allowed; the server's one
// coded error type is ProtocolError (protocol.go).

const (
	CodeBadPayload      = "bad_payload"       // a message's payload is malformed or out of range: the message says which field and what is allowed
	CodeBadJSON         = "bad_json"          // a message is not JSON
	CodeBadFrame        = "bad_frame"         // a binary frame (only JSON text messages are accepted)
	CodeBadVersion      = "bad_version"       // a message names a protocol version this server does not speak
	CodeUnknownType     = "unknown_type"      // a message type this server does not know
	CodeBadRequest      = "bad_request"       // a well-formed command the run cannot take now (a rewind past the start, a model that is not loaded)
	CodeOutOfOrder      = "out_of_order"      // a command that needs another first (step after the run stopped, reveal with no poll open)
	CodeNoSession       = "no_session"        // a command that needs a run before start
	CodeBusy            = "busy"              // the connection's command queue is full
	CodeRateLimited     = "rate_limited"      // too many messages, wrong codes or searches: the message says when to try again
	CodeByteBudget      = "byte_budget"       // the visitor's byte budget is spent: the message says when it refills
	CodeServerFull      = "server_full"       // no session, room or memory for runs is free
	CodeTooManySessions = "too_many_sessions" // this browser or address holds its most sessions
	CodeReplayTooLong   = "replay_too_long"   // a resume or room log would replay more forward passes than allowed
	CodeNonFinite       = "non_finite"        // the model produced NaN or ±Inf: the run stops
	CodeEngine          = "engine"            // the engine failed on a stage
	CodeInternal        = "internal"          // a server fault; the session stays usable
	CodeIdle            = "idle"              // the session was idle too long (a closing code)
	CodeFollowing       = "following"         // a follower socket sent a command it may not
	CodeNotPresenter    = "not_presenter"     // this page no longer presents the room
	CodeBadKey          = "bad_key"           // a presenter key that does not match the room
	CodeRoomNotFound    = "room_not_found"    // no room with that code
	CodeRoomClosed      = "room_closed"       // the room has ended
	CodeRoomFull        = "room_full"         // the room has its most followers
	CodeTooManyTabs     = "too_many_tabs"     // this browser follows the room in its most tabs
	CodeTooManyRooms    = "too_many_rooms"    // this address presents its most rooms
	CodeRemoved         = "removed"           // the presenter removed this network from the class
	CodeTooManyRemoved  = "too_many_removed"  // the room has removed its most networks
	CodeClassTooBig     = "class_too_big"     // a class request would not fit the server's sessions or memory
	CodeRetry           = "retry"             // internal: a room view went away while joining; the join is tried again
)
