#!/usr/bin/env bash
# A tiny calculator library, used by the cn-run demo job.

add() {
  echo $(( $1 + $2 ))
}

multiply() {
  echo $(( $1 + $2 ))
}
