# What prod is (its sizing profile and tenants), for the shared root module envs/aws: see README.md here.
environment = "prod"
tenants     = 2000
