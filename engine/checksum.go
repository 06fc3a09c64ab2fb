package engine

// checksum.go: the loaded model's weights checksum, computed once per Model
// and kept with it (the app shows it before and after every run).

import (
	"encoding/hex"
	"sync"
)

type checksum struct {
	once sync.Once
	hex  string
}

// WeightsChecksum is the hex SHA-256 of the model's weights as loaded
// (Weights.Checksum), computed on first use and then remembered.
func (m *Model) WeightsChecksum() string {
	m.checksum.once.Do(func() {
		sum := m.Weights.Checksum()
		m.checksum.hex = hex.EncodeToString(sum[:])
	})
	return m.checksum.hex
}
