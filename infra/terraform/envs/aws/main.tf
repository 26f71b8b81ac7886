# Rookery on AWS: one root module for every environment. What is an environment's own (its sizing profile
# and tenants) is envs/<env>/<env>.tfvars; what an operator supplies is envs/<env>/<env>.operator.tfvars
# (from operator.tfvars.example, not committed); its state is its own backend key (envs/<env>/backend.hcl,
# not committed) in its own working directory (TF_DATA_DIR=envs/<env>/.terraform); run from envs/<env>
# with `tofu -chdir=../aws` (envs/<env>/README.md). Every default lives once, in modules/deployment. Needs an AWS account (docs/operations.md, "Deploy"); nothing here runs on the test
# machines.

terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.80, < 7.0"
    }
  }

  # Partial configuration: tofu init -backend-config=<env>.backend.hcl (bucket, key, region, use_lockfile).
  backend "s3" {}
}

provider "aws" {
  region = var.region

  default_tags {
    tags = { ManagedBy = "opentofu", Repository = "rookery/infra/terraform/envs/aws", Environment = var.environment }
  }
}

module "rookery" {
  source = "../../modules/deployment"

  # The sizing profile: instance types and counts, Multi-AZ, deletion protection (modules/sizing).
  environment        = var.environment
  tenants            = var.tenants
  host_instance_type = var.host_instance_type

  region       = var.region
  azs          = var.azs
  image_id     = var.image_id
  public_names = var.public_names
  release      = var.release
  alarm_emails = var.alarm_emails
}
