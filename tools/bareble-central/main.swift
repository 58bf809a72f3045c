// Placeholder: the info command lands with the controller driver.
print("bareble-central")
