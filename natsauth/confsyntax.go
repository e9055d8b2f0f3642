package natsauth

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// confString quotes s for a nats-server configuration file. Only a
// double-quoted string is safe for any value: an unquoted one may be read
// as a number, a boolean or a $variable. Inside it the parser knows the
// escapes \" \\ and \xHH; every byte that is not printable ASCII is
// written as \xHH, which the parser turns back into that byte, so any
// secret survives whatever bytes it holds.
func confString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// confList renders strings as a configuration array.
func confList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = confString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// confPermissions renders p as the value of a user's "permissions" field,
// indented by indent. The file and RegisterUser read some values
// differently, and the rendering keeps the meaning RegisterUser gives
// them.
func confPermissions(p *server.Permissions, indent string) (string, error) {
	var b strings.Builder
	b.WriteString("{\n")
	for _, sp := range []struct {
		name string
		perm *server.SubjectPermission
	}{{"publish", p.Publish}, {"subscribe", p.Subscribe}} {
		if sp.perm == nil {
			continue
		}
		// The file reads an empty allow list as no list, which allows
		// everything, where RegisterUser denies everything.
		if sp.perm.Allow != nil && len(sp.perm.Allow) == 0 {
			return "", fmt.Errorf("%w: an empty %s allow list cannot be written to a configuration file",
				ErrConfig, sp.name)
		}
		fmt.Fprintf(&b, "%s  %s: {", indent, sp.name)
		if len(sp.perm.Allow) > 0 {
			fmt.Fprintf(&b, " allow: %s", confList(sp.perm.Allow))
		}
		if len(sp.perm.Deny) > 0 {
			if len(sp.perm.Allow) > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " deny: %s", confList(sp.perm.Deny))
		}
		b.WriteString(" }\n")
	}
	if r := p.Response; r != nil {
		fmt.Fprintf(&b, "%s  allow_responses: { max: %d, expires: %s }\n",
			indent, confResponseMax(r.MaxMsgs), confString(confResponseExpires(r.Expires).String()))
	}
	b.WriteString(indent + "}")
	return b.String(), nil
}

// confResponseMax is a response limit as the file writes it: RegisterUser
// reads 0 as no limit, the file as the default of 1, and a negative number
// as no limit.
func confResponseMax(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// confResponseExpires is confResponseMax for the expiry.
func confResponseExpires(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
