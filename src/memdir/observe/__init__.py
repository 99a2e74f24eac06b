"""The observer (L2): distils the journal into candidate beliefs; imports host transcripts."""
