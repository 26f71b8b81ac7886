terraform {
  required_version = ">= 1.9.0"
  # The AWS provider is required by modules/fleet, the only thing this module builds on.
}
