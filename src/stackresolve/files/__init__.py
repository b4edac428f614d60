"""Files in and out: bounded reads of what the user names (read) and atomic writes of what we
produce (write)."""
