"""Several hosts over one bucket: a chat lease in DynamoDB (`chat_lease.py`), the chats'
message files kept in the bucket next to the database (`chat_objects.py`), and what ties them to
a host's settings (`shared_chats.py`)."""
