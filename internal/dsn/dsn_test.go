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
