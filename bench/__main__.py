from bench.cli import main

main()
