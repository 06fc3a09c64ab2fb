package ws

// weightblock.go: the weight_block command: one stored block of a
// quantized weight matrix of a model the server offers (no run needed),
// answered from the catalog when it can show blocks (catalog.EngineCatalog).

import (
	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/web/wire"
)

// weightBlocker is a Catalog that can take a model's weight block apart.
type weightBlocker interface {
	WeightBlock(model string, r engine.WeightBlockRequest) (*engine.WeightBlock, error)
}

func (c *Conn) weightBlock(id int64, p *wire.WeightBlockPayload) {
	wb, ok := c.s.Catalog.(weightBlocker)
	if !ok {
		c.SendError(id, wire.CodeBadRequest, "this server cannot show weight blocks")
		return
	}
	b, err := wb.WeightBlock(p.Model, p.WeightBlockRequest)
	if err != nil {
		c.SendError(id, wire.CodeBadRequest, "weight_block: "+err.Error())
		return
	}
	c.Reply(id, wire.MsgWeightBlock, b)
}
