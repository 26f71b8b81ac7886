# tflint's core rules (the bundled terraform ruleset; rule plugins come from a registry these machines
# cannot reach). Run by the suite as `tflint --recursive --config=<this file>` from infra/terraform.
config {
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "all"
}
