"""What the offline extractor reads text with: word lists, message times and texts too long for one
field."""
