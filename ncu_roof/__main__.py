from ncu_roof.cli import main

if __name__ == "__main__":  # not when a worker process imports it
    main()
