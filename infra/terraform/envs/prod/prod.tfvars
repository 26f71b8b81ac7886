# What prod is: `tofu plan -var-file=prod.tfvars -var-file=prod.operator.tfvars` (docs/operations.md, "Deploy").
environment = "prod"
tenants     = 2000
