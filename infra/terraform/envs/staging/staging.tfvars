# What staging is (its sizing profile and tenants), for the shared root module envs/aws: see README.md here.
environment = "staging"
tenants     = 200
