package redis

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// A token is the nonce and a number as hex.Encode writes their big-endian
// bytes, whichever way it is written.
func TestTokenIsTheNonceAndANumberInHex(t *testing.T) {
	values := []uint64{0, 1, 0x0f, 0xf0, 0xff, 0x100, 0x0123456789abcdef, 0xfedcba9876543210, 1<<64 - 1}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		values = append(values, r.Uint64())
	}
	for _, v := range values {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], v)
		var got [16]byte
		putHex64(&got, v)
		if want := hex.EncodeToString(b[:]); string(got[:]) != want {
			t.Fatalf("putHex64(%#x) = %s, want %s", v, got[:], want)
		}
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], processNonce)
	var a, b token
	a.draw()
	b.draw()
	if a.String()[:16] != hex.EncodeToString(n[:]) || b.String()[:16] != a.String()[:16] {
		t.Errorf("tokens %s and %s do not start with the nonce %x", a.String(), b.String(), n)
	}
	seqA, errA := hex.DecodeString(a.String()[16:])
	seqB, errB := hex.DecodeString(b.String()[16:])
	if errA != nil || errB != nil || binary.BigEndian.Uint64(seqB) != binary.BigEndian.Uint64(seqA)+1 {
		t.Errorf("consecutive tokens %s and %s: want numbers one apart", a.String(), b.String())
	}
}
