"""The ways knightcode runs: print (text), JSON event stream, RPC, interactive."""
