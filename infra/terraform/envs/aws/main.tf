# The prod environment on AWS. Needs an AWS account: `tofu init` with the state bucket's settings,
# then plan and apply (docs/operations.md, "Deploy"). Nothing here runs on the test machines.
# Only what is prod's own is set here; every default lives once, in modules/deployment.

terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.80, < 7.0"
    }
  }

  # Partial configuration: tofu init -backend-config=backend.hcl (bucket, key, region, use_lockfile).
  backend "s3" {}
}

provider "aws" {
  region = var.region

  default_tags {
    tags = { ManagedBy = "opentofu", Repository = "rookery/infra/terraform/envs/prod" }
  }
}

module "rookery" {
  source = "../../modules/deployment"

  # The sizing profile: instance types and counts, Multi-AZ, deletion protection (modules/sizing).
  environment = "prod"
  tenants     = 2000

  region       = var.region
  azs          = var.azs
  image_id     = var.image_id
  public_names = var.public_names
  release      = var.release
  alarm_emails = var.alarm_emails
}
