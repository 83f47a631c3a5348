"""errkb: a verified knowledge base of GPU attention-backend errors."""
