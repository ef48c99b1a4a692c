module capbench/load/capload

go 1.26.8
