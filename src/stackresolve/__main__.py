from stackresolve.cli import program

program()
