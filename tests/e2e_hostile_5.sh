#!/bin/bash
# e2e_hostile_5.sh - group 5 of the adversary suite's cases
# (tests/e2e_hostile.sh, HOSTILE_GROUPS there says which cases).
HOSTILE_GROUP=5 exec bash "$(dirname "$0")/e2e_hostile.sh"
