module ofld.example/offload

go 1.19
