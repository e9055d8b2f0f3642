package protocol

// StoreOp is what a StoreRequest does.
type StoreOp string

// Store operations.
const (
	StoreGet    StoreOp = "get"
	StorePut    StoreOp = "put"
	StoreDelete StoreOp = "delete"
	StoreList   StoreOp = "list"
)

// Store limits, as the master enforces them.
const (
	MaxStoreKeyLen    = 256
	MaxStoreValueSize = 256 << 10
	// MaxStoreListLen is the most entries one list returns.
	MaxStoreListLen = 1000
)

// StoreRequest reads or writes the caller's principal's store: small
// values the master keeps replicated for a framework's own bookkeeping
// (the job runner's jobs). A principal reaches only its own entries. It
// may be made before the framework subscribes (its subject names no
// framework) or, fenced like every call, by a subscribed scheduler.
type StoreRequest struct {
	// FrameworkID is the caller's framework when it has one (the call is
	// then fenced by its session); the store is the principal's either
	// way.
	FrameworkID FrameworkID `msgpack:"fw,omitempty"`
	Op          StoreOp     `msgpack:"op"`
	Key         string      `msgpack:"key,omitempty"`
	// Value is what a put writes.
	Value []byte `msgpack:"value,omitempty"`
	// Create makes a put fail with ErrConflict if the key exists;
	// IfRevision makes a put or delete fail with it unless the entry is at
	// that revision.
	Create     bool   `msgpack:"create,omitempty"`
	IfRevision uint64 `msgpack:"if,omitempty"`
	// Prefix, After and Limit page a list: the keys starting with Prefix
	// that sort after After, at most Limit (MaxStoreListLen when 0).
	Prefix string `msgpack:"prefix,omitempty"`
	After  string `msgpack:"after,omitempty"`
	Limit  int    `msgpack:"limit,omitempty"`
}

// StoreItem is one entry of a store.
type StoreItem struct {
	Key      string `msgpack:"key" json:"key"`
	Value    []byte `msgpack:"value" json:"value"`
	Revision uint64 `msgpack:"rev" json:"revision"`
}

// StoreReply answers a StoreRequest: a get's entry (Found), a put's new
// revision, whether a delete found the key, a list's entries and whether
// more follow.
type StoreReply struct {
	Found    bool        `msgpack:"found,omitempty"`
	Item     StoreItem   `msgpack:"item,omitempty"`
	Revision uint64      `msgpack:"rev,omitempty"`
	Items    []StoreItem `msgpack:"items,omitempty"`
	More     bool        `msgpack:"more,omitempty"`
}

// CheckStoreKey requires a store key (or a prefix or page mark, what names
// which) of 1 to MaxStoreKeyLen bytes without control characters.
func CheckStoreKey(what, k string) error {
	if k == "" || len(k) > MaxStoreKeyLen {
		return Errorf(ErrInvalidArgument, "store %s of %d bytes: want 1 to %d", what, len(k), MaxStoreKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == 0x7f {
			return Errorf(ErrInvalidArgument, "store %s %q holds a control character", what, truncate(k))
		}
	}
	return nil
}

// ForFramework implements FrameworkCall.
func (r StoreRequest) ForFramework() FrameworkID { return r.FrameworkID }

// Validate checks the request's shape; the master checks keys and sizes
// again when it applies a write.
func (r StoreRequest) Validate() error {
	checkKey := func(what, k string, required bool) error {
		if k == "" && !required {
			return nil
		}
		return CheckStoreKey(what, k)
	}
	if r.FrameworkID != "" {
		if err := checkID("framework_id", r.FrameworkID); err != nil {
			return err
		}
	}
	if r.Limit < 0 || r.Limit > MaxStoreListLen {
		return Errorf(ErrInvalidArgument, "store list limit %d: want 0 to %d", r.Limit, MaxStoreListLen)
	}
	if len(r.Value) > MaxStoreValueSize {
		return Errorf(ErrTooLarge, "store value of %d bytes, limit %d", len(r.Value), MaxStoreValueSize)
	}
	switch r.Op {
	case StoreGet, StoreDelete:
		return checkKey("key", r.Key, true)
	case StorePut:
		if r.Create && r.IfRevision != 0 {
			return Errorf(ErrInvalidArgument, "a put is either a create or conditional on a revision")
		}
		return checkKey("key", r.Key, true)
	case StoreList:
		if err := checkKey("prefix", r.Prefix, false); err != nil {
			return err
		}
		return checkKey("after", r.After, false)
	}
	return Errorf(ErrInvalidArgument, "store op %q: want get, put, delete or list", truncate(string(r.Op)))
}
