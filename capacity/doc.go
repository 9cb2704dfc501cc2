// Package capacity answers capacity questions directly instead of among
// the loads a user guessed: the highest arrival rate a lock carries within
// an SLO (Search: bracket, bisect with short trials, confirm with full
// ones), and the client count where a closed loop stops gaining (Sweep,
// then FitUSL: the Universal Scalability Law's σ and κ). It runs nothing
// itself; the caller supplies a trial that runs a cell.
package capacity
