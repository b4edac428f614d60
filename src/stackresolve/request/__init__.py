"""What the user asked for: the command line's text parsed into typed values (parse), and the typed
input plus the detected machine built into a Request (build)."""
