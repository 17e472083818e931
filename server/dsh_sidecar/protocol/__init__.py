"""The wire contract: method names and attrs params/result types (no pygls here)."""
