"""What the hook path needs to speak to a host: the host table and hook input/output."""
