#!/bin/bash
# e2e_hostile_2.sh - group 2 of the adversary suite's cases
# (tests/e2e_hostile.sh, HOSTILE_GROUPS there says which cases).
HOSTILE_GROUP=2 exec bash "$(dirname "$0")/e2e_hostile.sh"
