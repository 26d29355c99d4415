"""The server's lab: the editor-protocol benchmark. The server never imports this package."""
