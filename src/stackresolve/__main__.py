from stackresolve.cli import main

main()
