package dsn

import "testing"

func TestConnectionStrings(t *testing.T) {
	for _, tc := range []struct{ name, addr, pg, my string }{
		{"bare", "127.0.0.1:5432", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "root@tcp(127.0.0.1:5432)/"},
		{"url", "postgres://u:p@db:5432/x", "postgres://u:p@db:5432/x", "postgres://u:p@db:5432/x"},
		{"keywords", "host=db port=5432 user=u", "host=db port=5432 user=u", "host=db port=5432 user=u"},
		{"mysql", "app:pw@tcp(db:3306)/app", "app:pw@tcp(db:3306)/app", "app:pw@tcp(db:3306)/app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Postgres(tc.addr); got != tc.pg {
				t.Errorf("Postgres(%q) = %q, want %q", tc.addr, got, tc.pg)
			}
			if got := MySQL(tc.addr); got != tc.my {
				t.Errorf("MySQL(%q) = %q, want %q", tc.addr, got, tc.my)
			}
		})
	}
}

// A password the user wrote into a connection string never reaches a
// message or a results file; the rest of the address does.
func TestRedactHidesPasswords(t *testing.T) {
	for _, tc := range []struct{ name, addr, want string }{
		{"bare", "127.0.0.1:5432", "127.0.0.1:5432"},
		{"url", "postgres://u:s3cret@db:5432/x?sslmode=disable", "postgres://u:xxxxx@db:5432/x?sslmode=disable"},
		{"url without password", "postgres://u@db:5432/x", "postgres://u@db:5432/x"},
		{"keywords", "host=db password=s3cret user=u", "host=db password=xxxxx user=u"},
		{"keywords quoted", "host=db password='s3 cret' user=u", "host=db password=xxxxx user=u"},
		{"keywords without password", "host=db port=5432", "host=db port=5432"},
		{"mysql", "app:s3cret@tcp(db:3306)/app?parseTime=true", "app:xxxxx@tcp(db:3306)/app?parseTime=true"},
		{"mysql password with @", "app:s3@cret@tcp(db:3306)/app", "app:xxxxx@tcp(db:3306)/app"},
		{"mysql without password", "root@tcp(db:3306)/", "root@tcp(db:3306)/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Redact(tc.addr); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
}
