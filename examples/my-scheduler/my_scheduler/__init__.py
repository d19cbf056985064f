"""An example scheduler package: one greedy policy, registered with oasis-opt by entry point."""
