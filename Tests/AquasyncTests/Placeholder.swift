// Tests of the Aquasync stack land here.
