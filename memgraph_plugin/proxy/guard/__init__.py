"""Who may call the proxy and the JSON memory API: the request guard and the keys file."""
