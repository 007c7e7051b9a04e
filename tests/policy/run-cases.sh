echo "ok - placeholder"
