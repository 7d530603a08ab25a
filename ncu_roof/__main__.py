from ncu_roof.cli import main

main()
