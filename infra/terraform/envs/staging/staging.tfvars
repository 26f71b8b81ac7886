# What staging is: `tofu plan -var-file=staging.tfvars -var-file=staging.operator.tfvars` (docs/operations.md, "Deploy").
environment = "staging"
tenants     = 200
