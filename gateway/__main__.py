from gateway.ops.cli import main

main()
