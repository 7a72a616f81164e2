#!/bin/bash
# e2e_hostile_1.sh - group 1 of the adversary suite's cases
# (tests/e2e_hostile.sh, HOSTILE_GROUPS there says which cases).
HOSTILE_GROUP=1 exec bash "$(dirname "$0")/e2e_hostile.sh"
