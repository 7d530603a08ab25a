from ncu_roof.cli import console

if __name__ == "__main__":  # not when a worker process imports it
    console()
